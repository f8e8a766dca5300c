"""The Python API: Vault (one vault), VaultSet (several), and the user's named vaults."""
