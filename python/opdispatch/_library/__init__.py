"""Internals of opdispatch.library: autograd glue, schema inference, custom ops."""
