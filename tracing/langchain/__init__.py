"""Capture from LangChain callbacks: the ToolCallRecorder, its call tree, events and joins."""
