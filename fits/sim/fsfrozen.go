package sim

// fsFrozenTwin is the twin of kind "fs-frozen": the same map as "fs" (the target is only not trained).
type fsFrozenTwin struct{ fsTwin }

func init() { RegisterTwin("fs-frozen", fsFrozenTwin{}) }
