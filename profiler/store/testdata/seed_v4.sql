-- Rows written against schema version 4, for the frozen v4 database
-- (testdata/schema_v4.sql): a model profiled on the CPU whose run measured
-- its memory, and one kept file digest. Made up.
INSERT INTO models VALUES ('mlp', 1, '3c5e7a9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c',
    '/var/lib/gpuletd/models/mlp/1/model.onnx', 5.0, 32, 'onnxruntime_onnx', 1735732800000000000, 1735732800000000000);

INSERT INTO profile_runs VALUES (1, '3c5e7a9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c', 'cpu',
    'complete', '4 points', 1735732800000000000, 1735732860000000000);

INSERT INTO latency_profiles VALUES ('3c5e7a9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c', 'cpu',
    100, 1, 0.3, 0.4, 0.31, 60, 1, 1735732830000000000, 1);

INSERT INTO model_memory VALUES ('3c5e7a9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c', 'cpu',
    74.2, 1, 1735732860000000000);

INSERT INTO file_digests VALUES ('/var/lib/gpuletd/models/mlp/1/model.onnx', 'onnxruntime', '{"sha256":"3c5e"}');
