"""The project: facts that cross files (kernels launched elsewhere, callers of launching
functions), found by a first pass over the files' outlines read line by line (`index`, which
reads a file's text only through `project_file`), kept between warm runs while the edited files
answer its questions as before (`views`, `snapshot`), and handed to each kernel file's lint as
a `ProjectContext`."""
