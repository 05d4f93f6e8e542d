"""L2: the tools an agent can call. One module per tool; the registry lists them."""
