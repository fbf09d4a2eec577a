"""The project: facts that cross files (kernels launched elsewhere, callers of launching
functions), found by a first pass over the stdlib's trees (`index`) and handed to each kernel
file's lint as a `ProjectContext`."""
