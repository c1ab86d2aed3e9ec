"""Traits that name the causes of deviations (expectations' `when:`): a NaN data input, a step a
32-bit runtime misreads, a base and exponent of different types, an integer zero divisor, an inexact
float quotient, omitted Slice-1 axes with fewer starts than the data's rank."""

from __future__ import annotations

import numpy as np

from conformance.case import Example
from conformance.reference import for_op
from conformance.registry import versions


def example(op: str, since: int, types: dict, attributes: dict | None = None, **inputs) -> Example:
    version = next(v for v in versions(op) if v.since_version == since)
    return Example(version, "unit", dict(types), dict(inputs), dict(attributes or {}), "unit", for_op(op).dtype_param)


def holds(op: str, trait: str, case: Example) -> bool:
    return for_op(op).traits[trait](case)


def test_clip_nan_input_is_about_the_data_not_the_bounds():
    nan_data = example("Clip", 13, {"T": "float"}, input=np.array([np.nan, 1], np.float32))
    nan_bound = example("Clip", 13, {"T": "float"}, input=np.array([0, 1], np.float32), min=np.float32(np.nan))
    assert holds("Clip", "nan-input", nan_data)
    assert not holds("Clip", "nan-input", nan_bound)
    assert not holds("Clip", "nan-input", example("Clip", 13, {"T": "int32"}, input=np.array([1, 2], np.int32)))


def test_every_elementwise_op_has_nan_input():
    with_nan = example("Sigmoid", 13, {"T": "float16"}, X=np.array([0, np.nan], np.float16))
    without = example("Sigmoid", 13, {"T": "float16"}, X=np.array([0, np.inf], np.float16))
    assert holds("Sigmoid", "nan-input", with_nan) and not holds("Sigmoid", "nan-input", without)
    assert "nan-input" in for_op("Tanh").traits and "nan-input" in for_op("Add").traits


def _slice(steps: list[int], axes: list[int] | None = (0,), data_rank: int = 1) -> Example:
    inputs = {"data": np.zeros((4,) * data_rank, np.float32), "starts": np.array([0] * len(steps), np.int64),
              "ends": np.array([4] * len(steps), np.int64), "axes": None if axes is None else np.array(axes, np.int64),
              "steps": np.array(steps, np.int64)}
    return example("Slice", 13, {"T": "float", "Tind": "int64"}, **inputs)


def test_slice_step_beyond_int32():
    assert holds("Slice", "step-beyond-int32", _slice([2**31]))
    assert holds("Slice", "step-beyond-int32", _slice([-(2**31) - 1]))
    assert holds("Slice", "step-beyond-int32", _slice([2**32]))  # fits in no int32, and reads as 0 in 32 bits
    assert not holds("Slice", "step-beyond-int32", _slice([2**31 - 1]))
    assert not holds("Slice", "step-beyond-int32", _slice([-(2**31)]))


def test_slice_1_default_axes_with_fewer_starts():
    fewer = example("Slice", 1, {"T": "float"}, {"starts": [0], "ends": [1]}, data=np.zeros((2, 3), np.float32))
    every = example("Slice", 1, {"T": "float"}, {"starts": [0, 0], "ends": [1, 1]}, data=np.zeros((2, 3), np.float32))
    named = example("Slice", 1, {"T": "float"}, {"starts": [0], "ends": [1], "axes": [1]}, data=np.zeros((2, 3), np.float32))
    assert holds("Slice", "default-axes-fewer-starts", fewer)
    assert not holds("Slice", "default-axes-fewer-starts", every)
    assert not holds("Slice", "default-axes-fewer-starts", named)


def test_pow_mixed_types():
    mixed = example("Pow", 15, {"T": "int32", "T1": "uint16"}, X=np.array([3], np.int32), Y=np.array([2], np.uint16))
    same = example("Pow", 15, {"T": "float", "T1": "float"}, X=np.array([3], np.float32), Y=np.array([2], np.float32))
    assert holds("Pow", "mixed-types", mixed) and not holds("Pow", "mixed-types", same)


def test_integer_zero_divisor_used_and_unused():
    used = example("Div", 14, {"T": "int32"}, A=np.array([1, 2], np.int32), B=np.array([1, 0], np.int32))
    unused = example("Div", 14, {"T": "int32"}, A=np.zeros((0, 2), np.int32), B=np.array([1, 0], np.int32))
    assert holds("Div", "integer-zero-divisor", used) and not holds("Div", "integer-zero-divisor", unused)
    assert holds("Mod", "integer-zero-divisor", example("Mod", 13, {"T": "uint8"}, A=np.array([5], np.uint8),
                                                         B=np.array([0], np.uint8)))


def test_divisor_reciprocal_inexact():
    def div(a, b, dt=np.float32, name="float"):
        return example("Div", 14, {"T": name}, A=np.array(a, dt), B=np.array(b, dt))

    assert holds("Div", "divisor-reciprocal-inexact", div([21], [7]))  # exact quotient, inexact 1/7
    assert holds("Div", "divisor-reciprocal-inexact", div([0], [1e-45]))  # 1/b beyond float
    assert holds("Div", "divisor-reciprocal-inexact", div([1], [5e-324], np.float64, "double"))
    assert not holds("Div", "divisor-reciprocal-inexact", div([3, 5], [4, 0.5]))
    assert not holds("Div", "divisor-reciprocal-inexact", div([np.inf], [3]))
    assert not holds("Div", "divisor-reciprocal-inexact", div([10], [7], np.int32, "int32"))


def _unary(op: str, since: int, values, dt=np.float32, name="float", attributes=None) -> Example:
    data_input = next(v for v in versions(op) if v.since_version == since).inputs[0].name
    return example(op, since, {"T": name}, attributes, **{data_input: np.array(values, dt)})


def test_softplus_exp_overflows_where_exp_leaves_the_type():
    assert holds("Softplus", "exp-overflows", _unary("Softplus", 22, [0, 89.0]))
    assert not holds("Softplus", "exp-overflows", _unary("Softplus", 22, [0, 88.0, np.inf]))
    assert holds("Softplus", "exp-overflows", _unary("Softplus", 22, [12.0], np.float16, "float16"))


def test_mish_tanh_saturates_and_softsign_quotient_rounds_to_one():
    assert holds("Mish", "tanh-saturates", _unary("Mish", 22, [10.0]))
    assert not holds("Mish", "tanh-saturates", _unary("Mish", 22, [5.0, -100.0, np.inf]))
    assert holds("Softsign", "quotient-rounds-to-one", _unary("Softsign", 22, [-4096.0], np.float16, "float16"))
    assert not holds("Softsign", "quotient-rounds-to-one", _unary("Softsign", 22, [100.0], np.float16, "float16"))


def test_shrink_unsigned_negative_bias():
    assert holds("Shrink", "unsigned-negative-bias", _unary("Shrink", 9, [154], np.uint8, "uint8", {"bias": -2.0}))
    assert not holds("Shrink", "unsigned-negative-bias", _unary("Shrink", 9, [154], np.uint8, "uint8", {"bias": 2.0}))
    assert not holds("Shrink", "unsigned-negative-bias", _unary("Shrink", 9, [154], np.int16, "int16", {"bias": -2.0}))


def test_cast_to_int64():
    to_int64 = example("Cast", 13, {"T1": "float", "T2": "int64"}, {"to": 7}, input=np.array([1.5], np.float32))
    to_int32 = example("Cast", 13, {"T1": "float", "T2": "int32"}, {"to": 6}, input=np.array([1.5], np.float32))
    assert holds("Cast", "to-int64", to_int64) and not holds("Cast", "to-int64", to_int32)


def test_atanh_negative_inside_domain():
    assert holds("Atanh", "negative-inside-domain", _unary("Atanh", 22, [0.5, -0.83]))
    assert not holds("Atanh", "negative-inside-domain", _unary("Atanh", 22, [0.5, -1.0, -2.0, 0.0]))


def test_sigmoid_positive_above_one():
    assert holds("Sigmoid", "positive-above-one", _unary("Sigmoid", 13, [0.5, 16.0]))
    assert holds("Sigmoid", "positive-above-one", _unary("Sigmoid", 13, [np.inf]))
    assert not holds("Sigmoid", "positive-above-one", _unary("Sigmoid", 13, [0.5, 1.0, -20.0]))


def _cast(source: str, target: str, values, numpy_type, **attributes) -> Example:
    from onnx import TensorProto

    to = getattr(TensorProto, target.upper()) if target != "float8e8m0" else TensorProto.FLOAT8E8M0
    return example("Cast", 25, {"T1": source, "T2": target}, {"to": to, **attributes}, input=np.array(values, numpy_type))


def test_cast_traits():
    import ml_dtypes

    assert holds("Cast", "same-type", _cast("uint8", "uint8", [1], np.uint8))
    assert not holds("Cast", "same-type", _cast("uint8", "int8", [1], np.uint8))
    assert holds("Cast", "negative-float4-source", _cast("float4e2m1", "float", [0.5, -0.5], ml_dtypes.float4_e2m1fn))
    assert not holds("Cast", "negative-float4-source", _cast("float4e2m1", "float", [0.5, 6.0], ml_dtypes.float4_e2m1fn))
    assert not holds("Cast", "negative-float4-source", _cast("float", "float4e2m1", [-0.5], np.float32))
    assert holds("Cast", "to-e8m0", _cast("float", "float8e8m0", [2.5], np.float32))
    assert not holds("Cast", "to-e8m0", _cast("float", "float8e4m3fn", [2.5], np.float32))


def _binary(op: str, since: int, dtype: str, a, b, numpy_type, attributes=None) -> Example:
    return example(op, since, {"T": dtype}, attributes, A=np.array(a, numpy_type), B=np.array(b, numpy_type))


def test_integer_quotient_half_or_more_and_product_beyond_type():
    assert holds("Div", "integer-quotient-half-or-more", _binary("Div", 14, "uint8", [254], [255], np.uint8))
    assert holds("Div", "integer-quotient-half-or-more", _binary("Div", 14, "int8", [-3], [2], np.int8))  # -1.5
    assert not holds("Div", "integer-quotient-half-or-more", _binary("Div", 14, "uint8", [1, 254], [131, 254], np.uint8))
    assert not holds("Div", "integer-quotient-half-or-more", _binary("Div", 14, "float", [1], [2], np.float32))
    assert holds("Mul", "integer-product-beyond-type", _binary("Mul", 14, "uint8", 255, 255, np.uint8))  # 0-d too
    assert holds("Mul", "integer-product-beyond-type", _binary("Mul", 14, "int8", [-128], [-1], np.int8))
    assert not holds("Mul", "integer-product-beyond-type", _binary("Mul", 14, "uint8", [15], [17], np.uint8))


def test_mod_float_floor_and_overflowing_quotient():
    assert holds("Mod", "float-floor-mod", _binary("Mod", 28, "float", [1.5], [-1.0], np.float32, {"fmod": 0}))
    assert not holds("Mod", "float-floor-mod", _binary("Mod", 28, "float", [1.5], [-1.0], np.float32, {"fmod": 1}))
    assert not holds("Mod", "float-floor-mod", _binary("Mod", 28, "int32", [3], [2], np.int32, {"fmod": 0}))
    huge = _binary("Mod", 28, "float", [-7.69e30], [-1.1754944e-38], np.float32, {"fmod": 1})
    assert holds("Mod", "float-quotient-overflows", huge)
    assert not holds("Mod", "float-quotient-overflows", _binary("Mod", 28, "float", [7.0], [2.0], np.float32, {"fmod": 1}))


def test_activation_and_exp_traits():
    hard_sigmoid = lambda beta: example("HardSigmoid", 22, {"T": "double"}, {"alpha": 1.0, "beta": beta},  # noqa: E731
                                        X=np.array([0.0]))
    assert holds("HardSigmoid", "zero-beta", hard_sigmoid(0.0)) and not holds("HardSigmoid", "zero-beta", hard_sigmoid(0.5))
    thresholded = lambda x: example("ThresholdedRelu", 10, {"T": "float16"}, {"alpha": 0.0},  # noqa: E731
                                    X=np.array(x, np.float16))
    assert holds("ThresholdedRelu", "minus-infinity-input", thresholded([1.0, -np.inf]))
    assert not holds("ThresholdedRelu", "minus-infinity-input", thresholded([np.inf, np.nan]))
    exp = lambda x: example("Exp", 13, {"T": "float"}, input=np.array(x, np.float32))  # noqa: E731
    assert holds("Exp", "beyond-2**64", exp([1.0, 44.5])) and not holds("Exp", "beyond-2**64", exp([44.3, np.inf]))


def test_slice_step_int32_min():
    assert holds("Slice", "step-int32-min", _slice([-(2**31)]))
    assert not holds("Slice", "step-int32-min", _slice([-(2**31) + 1])) and not holds("Slice", "step-int32-min", _slice([2**31]))


def _shift(direction: str, x, y, numpy_type) -> Example:
    dtype = np.dtype(numpy_type).name
    return example("BitShift", 28, {"T": dtype}, {"direction": direction}, X=np.array(x, numpy_type), Y=np.array(y, numpy_type))


def test_bit_shift_traits():
    assert holds("BitShift", "left-shift-beyond-type", _shift("LEFT", [255], [1], np.uint8))
    assert holds("BitShift", "left-shift-beyond-type", _shift("LEFT", [1], [7], np.int8))  # 128 is beyond int8
    assert not holds("BitShift", "left-shift-beyond-type", _shift("LEFT", [1, 3], [7, 6], np.uint8))
    assert not holds("BitShift", "left-shift-beyond-type", _shift("RIGHT", [255], [1], np.uint8))
    assert holds("BitShift", "right-shift-rounds", _shift("RIGHT", [255], [7], np.uint8))
    assert holds("BitShift", "right-shift-rounds", _shift("RIGHT", [-1], [3], np.int8))  # -0.125 floors to -1
    assert not holds("BitShift", "right-shift-rounds", _shift("RIGHT", [254, 4], [8, 1], np.uint8))  # by the width: not a rounding


def _slice13(start: int, end: int, step: int = 1, dim: int = 4) -> Example:
    inputs = {"data": np.zeros((2, dim), np.float32), "starts": np.array([start], np.int64),
              "ends": np.array([end], np.int64), "axes": np.array([1], np.int64), "steps": np.array([step], np.int64)}
    return example("Slice", 13, {"T": "float", "Tind": "int64"}, **inputs)


def test_slice_clamped_or_empty():
    assert holds("Slice", "clamped-or-empty", _slice13(-100, 3))  # a start the text clamps
    assert holds("Slice", "clamped-or-empty", _slice13(0, 2**63 - 1))  # an end the text clamps
    assert holds("Slice", "clamped-or-empty", _slice13(3, 1))  # start after end: nothing selected
    assert holds("Slice", "clamped-or-empty", _slice13(1, 3, step=-1))  # negative step, start before end
    assert holds("Slice", "clamped-or-empty", _slice13(0, 0, dim=0))  # a dim of 0
    assert not holds("Slice", "clamped-or-empty", _slice13(1, 3))
    assert not holds("Slice", "clamped-or-empty", _slice13(-3, -1))  # within [-dim, dim]
    assert not holds("Slice", "clamped-or-empty", _slice13(3, 0, step=-1))
    slice1 = example("Slice", 1, {"T": "float"}, {"starts": [-100], "ends": [3], "axes": [1]}, data=np.zeros((4, 5), np.float32))
    assert holds("Slice", "clamped-or-empty", slice1)
    assert not holds("Slice", "clamped-or-empty", example("Slice", 1, {"T": "float"}, {"starts": [0], "ends": [3], "axes": [1]},
                                                         data=np.zeros((4, 5), np.float32)))


def test_constant_of_shape_value_omitted():
    shape = np.array([2, 3], np.int64)
    assert holds("ConstantOfShape", "value-omitted", example("ConstantOfShape", 9, {"T1": "int64", "T2": "float"}, input=shape))
    given = example("ConstantOfShape", 9, {"T1": "int64", "T2": "float"}, {"value": np.array([1.0], np.float32)}, input=shape)
    assert not holds("ConstantOfShape", "value-omitted", given)


def test_hard_swish_finite_nonzero_input():
    assert holds("HardSwish", "finite-nonzero-input", example("HardSwish", 14, {"T": "float"}, X=np.array([0.5], np.float32)))
    assert holds("HardSwish", "finite-nonzero-input", example("HardSwish", 14, {"T": "float"}, X=np.array([-1e-45], np.float32)))
    specials = example("HardSwish", 14, {"T": "float"}, X=np.array([0.0, -0.0, np.inf, -np.inf, np.nan], np.float32))
    assert not holds("HardSwish", "finite-nonzero-input", specials)


def test_quantize_per_axis_empty():
    def q(x, scale, axis):
        return example("QuantizeLinear", 13, {"T1": "float", "T2": "int8"}, {"axis": axis}, x=np.array(x, np.float32),
                       y_scale=np.array(scale, np.float32), y_zero_point=np.zeros(np.shape(scale), np.int8))
    assert holds("QuantizeLinear", "per-axis-empty", q(np.zeros((2, 4, 0)), np.zeros(0), -1))
    assert not holds("QuantizeLinear", "per-axis-empty", q(np.zeros((2, 3)), np.ones(3), 1))
    assert not holds("QuantizeLinear", "per-axis-empty", q(np.zeros((2, 0)), 1.0, 1))  # per-tensor


def test_quantize_output_type_from_attribute():
    def q(out: str, code: int, zero_point: bool = False):
        inputs = {"x": np.array([1.0], np.float32), "y_scale": np.float32(1.0)}
        if zero_point:
            inputs["y_zero_point"] = np.zeros((), {"int8": np.int8, "uint8": np.uint8}[out])
        return example("QuantizeLinear", 21, {"T1": "float", "T2": out}, {"output_dtype": code}, **inputs)
    assert holds("QuantizeLinear", "output-type-from-attribute", q("int8", 3))
    assert not holds("QuantizeLinear", "output-type-from-attribute", q("uint8", 2))
    assert not holds("QuantizeLinear", "output-type-from-attribute", q("int8", 3, zero_point=True))


def test_cast_int32_min_to_bool():
    def cast(values, source="int32", numpy_type=np.int32, target="bool", to=9):
        return example("Cast", 13, {"T1": source, "T2": target}, {"to": to}, input=np.array(values, numpy_type))
    assert holds("Cast", "int32-min-to-bool", cast([-1, 2, 0, -(2**31)]))
    assert not holds("Cast", "int32-min-to-bool", cast([-(2**31) + 1, 2**31 - 1, 0]))
    assert not holds("Cast", "int32-min-to-bool", cast([-(2**31)], target="float", to=1))
    assert not holds("Cast", "int32-min-to-bool", cast([-(2**63)], source="int64", numpy_type=np.int64))
    like = example("CastLike", 15, {"T1": "int32", "T2": "bool"}, input=np.array([-(2**31)], np.int32),
                   target_type=np.array([True]))
    assert holds("CastLike", "int32-min-to-bool", like)


def test_thresholded_relu_alpha_beyond_type():
    def relu(alpha, dtype="float16", numpy_type=np.float16):
        return example("ThresholdedRelu", 22, {"T": dtype}, {"alpha": alpha}, X=np.array([1.0, -600.0], numpy_type))
    assert holds("ThresholdedRelu", "alpha-beyond-type", relu(1e30))
    assert holds("ThresholdedRelu", "alpha-beyond-type", relu(-7e4))
    assert not holds("ThresholdedRelu", "alpha-beyond-type", relu(65504.0))
    assert not holds("ThresholdedRelu", "alpha-beyond-type", relu(1e30, "float", np.float32))
    assert not holds("ThresholdedRelu", "alpha-beyond-type", relu(1e30, "int32", np.int32))  # no crash


def test_shrink_infinite_input():
    def shrink(values, dtype="float16", numpy_type=np.float16):
        return example("Shrink", 9, {"T": dtype}, {"lambd": 1.0, "bias": 3.0}, input=np.array(values, numpy_type))
    assert holds("Shrink", "infinite-input", shrink([-np.inf, 0.5]))
    assert holds("Shrink", "infinite-input", shrink([np.inf], "float", np.float32))
    assert not holds("Shrink", "infinite-input", shrink([65504.0, np.nan, -0.0]))
    assert not holds("Shrink", "infinite-input", shrink([255], "uint8", np.uint8))


def test_prelu_slope_on_channel_axis():
    def prelu(x_shape, slope_shape, since=9):
        return example("PRelu", since, {"T": "float"}, X=np.zeros(x_shape, np.float32), slope=np.ones(slope_shape, np.float32))
    assert holds("PRelu", "slope-on-channel-axis", prelu((2, 3, 4), (4,)))
    assert holds("PRelu", "slope-on-channel-axis", prelu((4, 4, 0), (0,), 7))  # OpenVINO: 'dim index: 1 mismatch'
    assert not holds("PRelu", "slope-on-channel-axis", prelu((2, 3, 4), (1,)))  # broadcasts anywhere
    assert not holds("PRelu", "slope-on-channel-axis", prelu((3, 4), (4,)))  # axis 1 is the trailing axis
    assert not holds("PRelu", "slope-on-channel-axis", prelu((2, 3, 4), (3, 4)))


def test_hard_sigmoid_alpha_inexact_in_type():
    def hard_sigmoid(attributes, dtype="float16", numpy_type=np.float16):
        return example("HardSigmoid", 6, {"T": dtype}, attributes, X=np.array([-2.322265625], numpy_type))
    assert holds("HardSigmoid", "alpha-inexact-in-type", hard_sigmoid({}))  # the default 0.2
    assert holds("HardSigmoid", "alpha-inexact-in-type", hard_sigmoid({"alpha": 0.1}))
    assert not holds("HardSigmoid", "alpha-inexact-in-type", hard_sigmoid({"alpha": 0.5}))
    assert not holds("HardSigmoid", "alpha-inexact-in-type", hard_sigmoid({}, "float", np.float32))


def test_div_and_mod_quotient_inexact():
    import ml_dtypes

    bf16 = ml_dtypes.bfloat16
    def binary(op, a, b, dtype="bfloat16", numpy_type=bf16, attributes=None):
        since = {"Div": 14, "Mod": 13}[op]
        return example(op, since, {"T": dtype}, attributes, A=np.array(a, numpy_type), B=np.array(b, numpy_type))
    # The OpenVINO case: 3.3895e38 / 3.034e34 is 11170.9, which bfloat16 does not hold.
    assert holds("Div", "quotient-inexact", binary("Div", [3.3895313892515355e38], [3.03424847670629e34]))
    assert not holds("Div", "quotient-inexact", binary("Div", [12.0, 3.0], [4.0, 0.0]))  # 3 exact; a zero divisor left out
    assert holds("Mod", "quotient-inexact", binary("Mod", [6.98958662167901e18], [3.0], attributes={"fmod": 1}))
    assert not holds("Mod", "quotient-inexact", binary("Mod", [7.0], [2.0], attributes={"fmod": 1}))
    assert not holds("Div", "quotient-inexact", binary("Div", [7, 2], [2, 1], "int32", np.int32))


def test_sub_lowest_subtrahend_and_prelu_integer_product_beyond_type():
    def sub(a, b, dtype="int8", numpy_type=np.int8):
        return example("Sub", 14, {"T": dtype}, A=np.array(a, numpy_type), B=np.array(b, numpy_type))
    assert holds("Sub", "lowest-subtrahend", sub(-127, -128))
    assert not holds("Sub", "lowest-subtrahend", sub(-128, -127))  # the minuend at the lowest: no negation of it
    assert not holds("Sub", "lowest-subtrahend", sub([0], [0], "uint8", np.uint8))  # unsigned: 0 is the lowest, -0 fits

    def prelu(x, slope):
        return example("PRelu", 16, {"T": "int32"}, X=np.array(x, np.int32), slope=np.array(slope, np.int32))
    assert holds("PRelu", "integer-product-beyond-type", prelu(-16777215, -1066219584))
    assert not holds("PRelu", "integer-product-beyond-type", prelu(16777215, -1066219584))  # x >= 0: no product
    assert not holds("PRelu", "integer-product-beyond-type", prelu([-3, 4], [2]))


def test_int32_min_to_bool_from_int64_too():
    def cast(dtype, numpy_type, values):
        return example("Cast", 19, {"T1": dtype, "T2": "bool"}, {"to": 9}, input=np.array(values, numpy_type))
    assert holds("Cast", "int32-min-to-bool", cast("int64", np.int64, [-2147483648, 2]))
    assert not holds("Cast", "int32-min-to-bool", cast("int64", np.int64, [-2147483649]))
    assert holds("CastLike", "int32-min-to-bool", example("CastLike", 15, {"T1": "int32", "T2": "bool"},
                                                        input=np.array([-2147483648], np.int32), target_type=np.array([True])))


def test_gelu_infinite_input():
    def gelu(values):
        return example("Gelu", 20, {"T": "float"}, X=np.array(values, np.float32))
    assert holds("Gelu", "infinite-input", gelu([1.0, np.inf]))
    assert not holds("Gelu", "infinite-input", gelu([1.0, np.nan, 3.4e38]))


def test_quantize_range_quotient_differs():
    """The FakeQuantize range's arithmetic in float32: (1.0500001 + 6.7000003) / 25.500002 * 255 is
    77.49999, so y is 77 where the text's 1.0500001 / 0.1 = 10.500001 rounds to 11, + 67 = 78."""
    def q(x, scale, zero_point):
        return example("QuantizeLinear", 19, {"T1": "float", "T2": "uint8"}, x=np.array(x, np.float32),
                       y_scale=np.float32(scale), y_zero_point=np.uint8(zero_point))
    assert holds("QuantizeLinear", "range-quotient-differs", q([1.0500001, 0.0], 0.1, 67))
    assert not holds("QuantizeLinear", "range-quotient-differs", q([1.0, 2.0, 200.0], 1.0, 3))
    assert not holds("QuantizeLinear", "range-quotient-differs", q([1.05, 0.0], 0.1, 67))  # 10.499999: 77 either way


def test_range_quotient_not_integer_is_a_positive_fractional_exact_quotient():
    def range_of(start, limit, delta, numpy_type=np.float32, name="float"):
        return example("Range", 11, {"T": name}, start=np.array(start, numpy_type), limit=np.array(limit, numpy_type),
                       delta=np.array(delta, numpy_type))
    # float32 7.0000005 - 7 is 2**-21: a quotient of 2**-21 / 7, whose ceiling is 1 and whose truncation is 0.
    assert holds("Range", "quotient-not-integer", range_of(7.0, 7.000000476837158, 7.0))
    assert holds("Range", "quotient-not-integer", range_of(0, 10, 3, np.int32, "int32"))
    assert not holds("Range", "quotient-not-integer", range_of(0, 10, 2, np.int32, "int32"))
    assert not holds("Range", "quotient-not-integer", range_of(10, 0, 3, np.int32, "int32"))  # an empty range
    assert not holds("Range", "quotient-not-integer", range_of(0.0, 1.0, 0.0))  # delta 0: no quotient
