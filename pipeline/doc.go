// Package pipeline holds inference pipelines with an end-to-end latency SLO
// and the planner that serves them with hardware and accuracy scaling (Loki,
// seed 004_86fc025dfe1323f1.txt, §4).
//
// A pipeline is a chain of tasks; each task can be served by any of its
// model variants, which differ in accuracy and speed, and a variant's every
// request becomes, on average, Fanout requests of the next task (a detector's
// objects go one by one to a classifier; a cheaper detector finds fewer).
// Plan answers, for a demand in requests per second at the first task and a
// number of workers: which variants run, on how many workers each, at which
// batch size, the latency budget of every task, and the share of each task's
// requests every variant takes. It first tries hardware scaling (the most
// accurate variants only, on as few workers as carry the demand) and, when
// even every worker cannot, accuracy scaling (the variant mix of the highest
// expected end-to-end accuracy that carries the demand on the workers).
//
// The package does no I/O; latency curves come in as functions.
package pipeline
