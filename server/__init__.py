"""edit-fidelity language server and fidelity core."""
