"""opdispatch.utils: helpers for framework authors (dispatch modes, pytrees)."""
