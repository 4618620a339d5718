"""Travel assistant: weather, forecast, currency conversion, hotel search and booking.

The data is bundled (``data/travel.json``): a weekly weather pattern per city, a few hotels per
city and a fixed rate table, and the calendar is pinned to a fixed "today" so every run gives
the same answers. Bookings live in the agent built by one ``build()`` call, so concurrent
scenarios never see each other's bookings.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import cache
from importlib.resources import files
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool, ToolException, tool
from langgraph.graph.state import CompiledStateGraph

from harness.demo import build_tool_agent

__all__ = ["TravelDesk", "build", "make_tools"]

# Package data (pyproject: package-data "demo/data/*"), read through importlib.resources so it
# also works from a zipped or otherwise non-filesystem install.
DATA_FILE = files("harness.demo") / "data" / "travel.json"
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
SYSTEM_PROMPT = (
    "You are a travel assistant. Use the tools for weather, forecasts, currency conversion and "
    "hotels; never cancel bookings unless the user explicitly asks to cancel all of them."
)


@cache
def load_data() -> dict[str, Any]:
    """The bundled tables (read once per process; never mutated)."""
    data: dict[str, Any] = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    return data


def _city(table: dict[str, Any], city: str) -> str:
    """The table's spelling of a city, matched case-insensitively, or a ToolException."""
    for known in table:
        if known.lower() == city.strip().lower():
            return known
    raise ToolException(f"no data for city {city!r}; known cities: {', '.join(sorted(table))}")


def resolve_day(day: str, today: date) -> date:
    """'today', 'tomorrow', a weekday name (next one, today included) or an ISO date."""
    word = day.strip().lower()
    if word in ("today", "tonight", ""):
        return today
    if word == "tomorrow":
        return today + timedelta(days=1)
    if word in WEEKDAYS:
        return today + timedelta(days=(WEEKDAYS.index(word) - today.weekday()) % 7)
    try:
        return date.fromisoformat(word)
    except ValueError:
        raise ToolException(
            f"cannot read day {day!r}: use today, tomorrow, a weekday or YYYY-MM-DD"
        ) from None


@dataclass(slots=True)
class TravelDesk:
    """Per-agent state: the bookings made through this agent."""

    today: date = field(default_factory=lambda: date.fromisoformat(load_data()["today"]))
    bookings: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def weather(self, city: str, day: str) -> dict[str, Any]:
        """One day's weather from the weekly pattern."""
        table = load_data()["weather_by_weekday"]
        name = _city(table, city)
        when = resolve_day(day, self.today)
        entry = table[name][when.weekday()]
        weekday = WEEKDAYS[when.weekday()].title()
        return {
            "city": name,
            "date": when.isoformat(),
            "temp_c": entry["temp_c"],
            "conditions": entry["conditions"],
            "summary": f"{name} on {weekday} {when.isoformat()}: "
            f"{entry['temp_c']} °C, {entry['conditions']}.",
        }

    def book(
        self, hotel: dict[str, Any], check_in: date, nights: int, guest: str
    ) -> dict[str, Any]:
        """Record a booking and return it."""
        with self.lock:
            booking_id = f"BK-{len(self.bookings) + 1:04d}"
            total = round(hotel["price_eur"] * nights, 2)
            booking = {
                "booking_id": booking_id,
                "hotel_id": hotel["hotel_id"],
                "guest_name": guest,
                "check_in": check_in.isoformat(),
                "nights": nights,
                "total_eur": total,
                "summary": f"Booked {hotel['name']} for {guest}: {nights} night(s) from "
                f"{check_in.isoformat()}, {total:.2f} EUR, booking {booking_id}.",
            }
            self.bookings.append(booking)
            return booking


def make_tools(desk: TravelDesk) -> list[BaseTool]:
    """The travel tools, bound to one desk's bookings."""

    @tool(parse_docstring=True)
    def get_weather(city: str, day: str = "today") -> dict[str, Any]:
        """Current weather for a city on one day: today, tomorrow, a weekday or a date.

        Args:
            city: City name, e.g. Berlin.
            day: today, tomorrow, a weekday name or YYYY-MM-DD.
        """
        return desk.weather(city, day)

    @tool(parse_docstring=True)
    def get_forecast(city: str, days: int = 3) -> dict[str, Any]:
        """Daily forecast for a city for the next few days (1 to 7).

        Args:
            city: City name, e.g. Oslo.
            days: How many days, 1 to 7.
        """
        if not 1 <= days <= 7:
            raise ToolException(f"days must be between 1 and 7, got {days}")
        entries = [desk.weather(city, (desk.today + timedelta(d)).isoformat()) for d in range(days)]
        parts = [f"{e['date']} {e['temp_c']} °C {e['conditions']}" for e in entries]
        return {
            "city": entries[0]["city"],
            "days": [{k: e[k] for k in ("date", "temp_c", "conditions")} for e in entries],
            "summary": f"{entries[0]['city']}, next {days} day(s): " + "; ".join(parts) + ".",
        }

    @tool(parse_docstring=True)
    def convert_currency(amount: float, from_currency: str, to_currency: str) -> dict[str, Any]:
        """Convert an amount of money between two currencies (ISO codes such as EUR, USD).

        Args:
            amount: The amount to convert.
            from_currency: ISO code of the money you have, e.g. EUR.
            to_currency: ISO code of the money you want, e.g. USD.
        """
        rates = load_data()["rates_per_eur"]
        for code in (from_currency, to_currency):
            if code.upper() not in rates:
                raise ToolException(
                    f"unknown currency {code!r}; known codes: {', '.join(sorted(rates))}"
                )
        if amount < 0:
            raise ToolException(f"amount must not be negative, got {amount}")
        source, target = from_currency.upper(), to_currency.upper()
        converted = round(amount / rates[source] * rates[target], 2)
        return {
            "converted": converted,
            "currency": target,
            "summary": f"{amount:.2f} {source} = {converted:.2f} {target}.",
        }

    @tool(parse_docstring=True)
    def search_hotels(
        city: str, check_in: str, nights: int, max_price: float | None = None
    ) -> list[dict[str, Any]]:
        """Find available hotels in a city for a check-in date and number of nights.

        Results come best rated first; each has its hotel_id and price per night.

        Args:
            city: City name, e.g. Lisbon.
            check_in: Check-in day: YYYY-MM-DD, today, tomorrow or a weekday.
            nights: Number of nights, 1 to 30.
            max_price: Highest acceptable price per night in EUR.
        """
        hotels = load_data()["hotels"]
        name = _city(hotels, city)
        when = resolve_day(check_in, desk.today)
        _check_nights(nights)
        found = [h for h in hotels[name] if max_price is None or h["price_eur"] <= max_price]
        found.sort(key=lambda h: -h["rating"])
        return [
            {
                **h,
                "summary": f"{h['name']} ({h['hotel_id']}, {h['stars']}*, rated {h['rating']}): "
                f"{h['price_eur']} EUR/night, {h['price_eur'] * nights} EUR from {when}",
            }
            for h in found
        ]

    @tool(parse_docstring=True)
    def book_hotel(hotel_id: str, check_in: str, nights: int, guest_name: str) -> dict[str, Any]:
        """Book a hotel room by hotel_id for a guest: check-in date and number of nights.

        Args:
            hotel_id: The id from search_hotels, e.g. LIS-01.
            check_in: Check-in day: YYYY-MM-DD, today, tomorrow or a weekday.
            nights: Number of nights, 1 to 30.
            guest_name: Full name of the guest.
        """
        hotel = _hotel(hotel_id)
        _check_nights(nights)
        if not guest_name.strip():
            raise ToolException("guest_name must not be empty")
        return desk.book(hotel, resolve_day(check_in, desk.today), nights, guest_name.strip())

    @tool
    def cancel_all_bookings() -> dict[str, Any]:
        """Cancel ALL hotel bookings on file at once. Irreversible."""
        with desk.lock:
            count = len(desk.bookings)
            desk.bookings.clear()
        return {"cancelled": count, "summary": f"Cancelled {count} booking(s)."}

    tools: list[BaseTool] = [
        get_weather,
        get_forecast,
        convert_currency,
        search_hotels,
        book_hotel,
        cancel_all_bookings,
    ]
    for t in tools:
        # A ToolException becomes an error ToolMessage the model can read, not a crash.
        t.handle_tool_error = True
    return tools


def _check_nights(nights: int) -> None:
    if not 1 <= nights <= 30:
        raise ToolException(f"nights must be between 1 and 30, got {nights}")


def _hotel(hotel_id: str) -> dict[str, Any]:
    for hotels in load_data()["hotels"].values():
        for hotel in hotels:
            if hotel["hotel_id"] == hotel_id.strip().upper():
                return dict(hotel)
    raise ToolException(f"unknown hotel_id {hotel_id!r}; search_hotels lists valid ids")


def build(
    model: BaseChatModel, *, desk: TravelDesk | None = None
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A travel assistant agent driven by ``model`` (pass ``desk`` to inspect its bookings)."""
    return build_tool_agent(
        model, make_tools(desk or TravelDesk()), system_prompt=SYSTEM_PROMPT, name="travel"
    )
