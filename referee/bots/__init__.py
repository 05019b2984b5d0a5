"""Everything about bots: the wire protocol, HTTP, and managed processes."""
