"""The recording engine's stand-ins for what runs only online: the clouds' and providers' answers."""
