"""The client of bots: the transport seam, the lean pool, https, posting and fault classification, the wire protocol and its schemas."""
