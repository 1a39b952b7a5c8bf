"""One rule per module; each module exposes ``RULE``. ``policies.pack`` lists them in order."""
