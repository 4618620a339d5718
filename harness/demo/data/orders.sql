-- Seed data of the order-support demo agent. Each agent built gets its own copy in memory.
CREATE TABLE customers (
    customer_id TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    email       TEXT NOT NULL UNIQUE
);
CREATE TABLE orders (
    order_id    TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES customers(customer_id),
    item        TEXT NOT NULL,
    placed_on   TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('open', 'shipped', 'delivered', 'cancelled', 'refunded')),
    amount_paid REAL NOT NULL
);
CREATE TABLE refunds (
    refund_id   INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id    TEXT NOT NULL REFERENCES orders(order_id),
    amount      REAL NOT NULL CHECK (amount > 0),
    reason      TEXT NOT NULL
);

INSERT INTO customers VALUES
    ('C-001', 'Ada Lovelace', 'ada@example.com'),
    ('C-002', 'Alan Turing',  'alan@example.com'),
    ('C-003', 'Grace Hopper', 'grace@example.com');

INSERT INTO orders VALUES
    ('ORD-1042', 'C-001', 'noise-cancelling headphones', '2025-05-20', 'delivered', 89.90),
    ('ORD-1043', 'C-001', 'USB-C cable',                 '2025-05-28', 'shipped',   12.50),
    ('ORD-1050', 'C-001', 'mechanical keyboard',         '2025-06-01', 'open',     129.00),
    ('ORD-2001', 'C-002', 'laptop stand',                '2025-05-30', 'open',      45.00),
    ('ORD-2002', 'C-002', 'desk lamp',                   '2025-05-02', 'delivered', 39.99),
    ('ORD-3001', 'C-003', 'compiler handbook',           '2025-04-11', 'cancelled', 54.00);
