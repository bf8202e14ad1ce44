"""The staff pages: manage accounts, see each account's lock items, audit and repair locks."""
