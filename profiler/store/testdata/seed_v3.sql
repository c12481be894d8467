-- Rows written against schema version 3, for the frozen v3 database
-- (testdata/schema_v3.sql): a model profiled on the CPU whose run measured
-- its memory. Made up.
INSERT INTO models VALUES ('resnet18', 1, '7a2c4e6f8a0b2c4d6e8f0a1b3c5d7e9f1a3b5c7d9e1f3a5b7c9d1e3f5a7b9c1d',
    '/var/lib/gpuletd/models/resnet18/1/model.onnx', 500.0, 32, 'onnxruntime_onnx', 1735732800000000000, 1735732800000000000);

INSERT INTO profile_runs VALUES (1, '7a2c4e6f8a0b2c4d6e8f0a1b3c5d7e9f1a3b5c7d9e1f3a5b7c9d1e3f5a7b9c1d', 'cpu',
    'complete', '2 points', 1735732800000000000, 1735732860000000000);

INSERT INTO latency_profiles VALUES ('7a2c4e6f8a0b2c4d6e8f0a1b3c5d7e9f1a3b5c7d9e1f3a5b7c9d1e3f5a7b9c1d', 'cpu',
    100, 1, 21.0, 23.0, 21.4, 60, 1, 1735732830000000000, 1);

INSERT INTO model_memory VALUES ('7a2c4e6f8a0b2c4d6e8f0a1b3c5d7e9f1a3b5c7d9e1f3a5b7c9d1e3f5a7b9c1d', 'cpu',
    212.5, 1, 1735732860000000000);
