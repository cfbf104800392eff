// Package mutex is package correct behind one process-wide lock: every
// delivery of every handler in the process waits for a sync.Mutex before
// it calls correct's Process, and holds it until Process returns.
//
// It is equivalent because the lock only serialises what correct already
// makes safe: deliveries that would have run at once run one after the
// other, each correct's transaction statement for statement. It is slower
// and it orders nothing across processes, but it answers every delivery as
// correct would, in some order that two concurrent deliveries could have
// had. A check that rejects it judges how the deliveries were scheduled,
// not what they did.
//
// Compare: diff -u correct/process.go equivalent/mutex/process.go
package mutex
