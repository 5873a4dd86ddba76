// kbctl: the command-line client of kbd. See client/kbctl_app.h.
#include <iostream>

#include "client/kbctl_app.h"

int main(int argc, char** argv) {
  return kbench::RunKbctl(argc, argv, std::cout, std::cerr);
}
