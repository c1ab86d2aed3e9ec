"""conform: spec-conformance tests for ONNX operators, checked against real runtimes."""

import warnings

__version__ = "0.1.0"

# conform computes on special values on purpose (a signalling NaN widened, an overflow a trait
# looks for, a cast of inf): numpy's floating-point warnings from conform's own code say nothing
# to a user, and printed in the middle of a run they read as trouble. Only warnings raised in
# conform's modules are silenced.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"conformance(\.|$)")


def tool_versions() -> dict[str, str]:
    """conform's version, those of the libraries that decide a run's cases and expected outputs
    (hypothesis draws them, numpy and ml_dtypes compute them, onnx says which types exist), and
    Python's. The same seed gives the same cases and bytes only with the same ones, so every report
    and manifest records them. Imported here, when asked, so that importing conform stays light."""
    import platform
    from importlib.metadata import version

    import ml_dtypes
    import numpy
    import onnx

    return {"conform": __version__, "hypothesis": version("hypothesis"), "ml_dtypes": ml_dtypes.__version__,
            "numpy": numpy.__version__, "onnx": onnx.__version__, "python": platform.python_version()}
