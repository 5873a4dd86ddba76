int KbTestUtilPlaceholder() { return 0; }
