"""Django accounts stored in DynamoDB, with uniqueness enforced by lock items."""

__version__ = "0.2.0"
