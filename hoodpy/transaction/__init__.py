"""Transactions: locks, heartbeats and optimistic conflict detection between concurrent writers."""
