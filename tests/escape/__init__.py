"""Blind escape suite: attacks a prompt-injected model could make through ``k1412 run``."""
