-- The part of a model's measured memory that was the executor's own: its
-- resident memory before it loaded the model (the Go runtime, ONNX Runtime
-- and its environment), which every executor holds once whatever it serves.
-- The planner counts it once per executor and the rest once per model copy;
-- 0 where it was not measured (rows measured before version 5), which
-- counts the whole resident_mb per copy as before.
ALTER TABLE model_memory ADD COLUMN executor_mb REAL NOT NULL DEFAULT 0 CHECK (executor_mb >= 0);
