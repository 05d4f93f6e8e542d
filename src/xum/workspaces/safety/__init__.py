"""Safety boundaries of a session: the front-end's safety choice and permission modes, approvals,
the sandbox policy, secret masking and project trust."""
