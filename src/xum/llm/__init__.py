"""L1: providers behind one streaming interface (see `xum.llm.types`)."""
