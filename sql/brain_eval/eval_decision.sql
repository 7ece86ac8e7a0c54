-- The rubric's verdict on a completed run.
CREATE TYPE eval_decision AS ENUM ('pass', 'pass_with_notes', 'conditional', 'fail');
