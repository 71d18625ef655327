"""MRCR (multi-round co-reference): reproduce the k-th of several identical requests' answers from a
long conversation, on OpenAI's published conversations or on ones built here at exact lengths."""
