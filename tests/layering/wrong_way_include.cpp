// Compiled against the model layer alone, this include of a higher layer
// (train) must fail: the ctest `layering` expects this file not to build.
#include "mft/train/objective.hpp"

int main() { return 0; }
