"""Running compiled programs: an `Executable` per program and settings (`executable`),
the host transfers of a call (`transfers`), the one place that decides how a launch
runs (`launch`), and which entry parameters a program may write (`written`)."""
