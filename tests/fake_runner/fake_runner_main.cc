int main() { return 0; }  // placeholder until the real main lands
