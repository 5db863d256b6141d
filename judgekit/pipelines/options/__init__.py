"""One options model per pipeline, each the typed ``<pipeline>:`` section of a run config.

The registry (:data:`judgekit.pipelines.PIPELINES`) names each pipeline's model; the config loader
(:func:`judgekit.config.load_config`) validates the run's section against it when the config
loads, so a bad option is one error naming the file, line and key before anything runs. These
modules import nothing of judgekit but each other, so the loader can import them.
"""
