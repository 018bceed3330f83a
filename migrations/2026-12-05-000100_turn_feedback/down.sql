DROP TABLE eval_runs;
DROP TABLE feedback_expected;
DROP TABLE turn_feedback;
