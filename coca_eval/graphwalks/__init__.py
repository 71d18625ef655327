"""GraphWalks: graph traversal over an edge list, after OpenAI's ``openai/graphwalks`` set, at exact
token lengths (``--source generate``) or on the published rows (``--source openai``)."""
