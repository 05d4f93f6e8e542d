"""L3: what the model is told: agents, instructions, skills, the system prompt."""
