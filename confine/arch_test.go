package confine_test

import "runtime"

func runtimeArch() string { return runtime.GOARCH }
