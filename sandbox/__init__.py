"""Running untrusted generated code and hidden tests with real isolation."""
