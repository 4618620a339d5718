"""Shared test support: real LangGraph agents driven by scripted chat models."""
