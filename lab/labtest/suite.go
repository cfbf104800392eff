package labtest

import "os"

// FullEnv is the environment variable that runs the kit's own tests at
// full strength: IDEMLAB_FULL=1 go test ./..., as CI does.
const FullEnv = "IDEMLAB_FULL"

// FullSuite reports whether the kit's own tests run at full strength. The
// default, go test ./..., is the quick suite a developer runs after every
// edit: every wrong fix of the gallery is still rejected (by replaying the
// story that breaks it), but the searches that must find nothing tell
// fewer stories, in one time zone. A student's check (go test ./checks
// -exercise=…) always runs at full strength.
func FullSuite() bool { return os.Getenv(FullEnv) == "1" }
