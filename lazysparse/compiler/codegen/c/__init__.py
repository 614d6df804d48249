"""The C printer: loop IR to one C99 ``ls_kernel`` function, and the C spellings of dtypes and
scalar operations (NumPy's semantics)."""
