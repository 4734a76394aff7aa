// Ranks as MPI processes (mpirun). Available when symmoe was built with MPI.
#pragma once

#include <memory>

#include "symmoe/comm/group.hpp"

namespace symmoe::comm {

bool mpi_available();

// Initializes MPI if needed (and finalizes it when the last MPI group is destroyed, if this
// call initialized it). Throws when symmoe was built without MPI.
std::unique_ptr<Group> make_mpi_group(double timeout_s = 0);

}  // namespace symmoe::comm
