-- Why a run happened (seed 002, exactly as written).
CREATE TYPE eval_run_trigger AS ENUM ('pre_launch', 'quarterly', 'prompt_change', 'model_promotion', 'on_demand');
