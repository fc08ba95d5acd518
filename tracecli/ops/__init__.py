"""Operations: prims (meta rule + torch implementation), ltorch (torch-level symbols
that decompose into prims), the torch-callable map and the opaque fallback."""
