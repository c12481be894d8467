-- Rows written against schema version 2, for the frozen v2 database
-- (testdata/schema_v2.sql): a model profiled on the CPU by a run that
-- finished and one that a stop interrupted. Made up.
INSERT INTO models VALUES ('vgg', 1, '5f1a9c3d0b7e2a4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c',
    '/var/lib/gpuletd/models/vgg/1/model.onnx', 1000.0, 8, 'onnxruntime_onnx', 1735732800000000000, 1735732800000000000);

INSERT INTO profile_runs VALUES (1, '5f1a9c3d0b7e2a4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c', 'cpu',
    'complete', '4 points', 1735732800000000000, 1735732860000000000);
INSERT INTO profile_runs VALUES (2, '5f1a9c3d0b7e2a4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c', 'cpu',
    'incomplete', 'interrupted by a stop', 1735819200000000000, 1735819230000000000);

INSERT INTO latency_profiles VALUES ('5f1a9c3d0b7e2a4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c', 'cpu',
    50, 1, 41.5, 44.0, 41.9, 60, 1, 1735732830000000000, 1);
INSERT INTO latency_profiles VALUES ('5f1a9c3d0b7e2a4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c', 'cpu',
    100, 1, 23.2, 25.1, 23.6, 60, 1, 1735732850000000000, 1);

INSERT INTO events VALUES (1, 1735732860000000000, 'profile_job', 'info', 'profiled vgg on cpu', '{"run":"1"}');
