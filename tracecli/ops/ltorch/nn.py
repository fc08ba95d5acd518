"""Neural-network ltorch symbols: embeddings, dropout, attention, normalisations,
convolutions, pooling and losses."""
