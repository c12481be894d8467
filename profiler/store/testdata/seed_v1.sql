-- Rows written against schema version 1, for the frozen v1 database
-- (testdata/schema_v1.sql). Latencies, utilisation and the co-location are
-- alexnet/resnet50 figures from shared/data/igniter/v100-mps-profile.jsonl
-- (V100 under MPS); the rest is made up.
INSERT INTO models VALUES ('alexnet', 1, '08ebae3ebd32ea857cabe758f2cf2adab125006960605b5b241366d194e9b947',
    '/var/lib/gpuletd/models/alexnet/1/model.onnx', 10.0, 32, 'onnxruntime_onnx', 1735732800000000000, 1735732800000000000);
INSERT INTO models VALUES ('resnet50', 2, 'a0fcff33653ceb2e7e772c889f9d88babc3f132db114ba828dcd53968048e7c1',
    '/var/lib/gpuletd/models/resnet50/2/model.onnx', 95.0, 16, 'onnxruntime_onnx', 1735732800000000000, 1735819200000000000);

INSERT INTO latency_profiles VALUES ('08ebae3ebd32ea857cabe758f2cf2adab125006960605b5b241366d194e9b947', 'igniter-v100',
    20, 1, 2.0732911841155173, NULL, NULL, 0, 1, 1735732800000000000);
INSERT INTO latency_profiles VALUES ('08ebae3ebd32ea857cabe758f2cf2adab125006960605b5b241366d194e9b947', 'igniter-v100',
    40, 1, 1.3722677952069715, NULL, NULL, 0, 1, 1735732800000000000);
INSERT INTO latency_profiles VALUES ('08ebae3ebd32ea857cabe758f2cf2adab125006960605b5b241366d194e9b947', 'igniter-v100',
    20, 2, 2.532432363344048, 2.9, 2.6, 37, 0, 1735732800000000000);

INSERT INTO utilisation VALUES ('08ebae3ebd32ea857cabe758f2cf2adab125006960605b5b241366d194e9b947', 'igniter-v100',
    20, 1, 'dram', 10.075180111842773, 'igniter-v100', 1735732800000000000);
INSERT INTO utilisation VALUES ('08ebae3ebd32ea857cabe758f2cf2adab125006960605b5b241366d194e9b947', 'igniter-v100',
    20, 1, 'sm', NULL, 'unknown', 1735732800000000000);

INSERT INTO interference_samples VALUES (1, 'igniter-v100',
    'alexnet', 2, 20, NULL, 2.7610640856844304,
    'resnet50', 2, 80, NULL, 3.5690385860655733, 'igniter-v100', 1735732800000000000);

INSERT INTO interference_coefficients VALUES (1, 'igniter-v100', 'paper-linear',
    '["l2_a","dram_a","l2_b","dram_b","const"]', '[0.01,0.002,0.003,0.004,1.0]',
    0.91, 0.05, 0.03, 0.08, 0.11, 600, 1735736400000000000);

INSERT INTO plans VALUES (1, 1735740000000000000, 'gpulet-int', 'period',
    '{"schedulable":true,"gpus":[{"id":0,"gpulets":[{"size":40,"models":[{"name":"alexnet","batch":4,"rate":200,"latency_ms":2.1}]}]}],"unscheduled":{}}', 1);

INSERT INTO events VALUES (1, 1735740000000000000, 'reorganize', 'info', 'applied plan 1', '{"plan":"1"}');
INSERT INTO events VALUES (2, 1735740060000000000, 'executor_restart', 'warning', 'executor gpu0-40 exited', '{}');

INSERT INTO device_types VALUES ('igniter-v100', 'shared/data/igniter/v100-mps-profile.jsonl', 'mps',
    '[10,20,40,50,60,80,100]', 16384.0, 1735732800000000000, 1735732800000000000);
