// Compiled against the model layer alone, includes of the model layer and
// the layers below it build: the control for the ctest `layering`.
#include "mft/core/config.hpp"
#include "mft/io/h5.hpp"
#include "mft/model/field.hpp"

int main() { return 0; }
