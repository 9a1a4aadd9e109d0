"""Money as the registry and the questions hold it: exact decimals of whole cents.

A limit read from a database REAL (0.5) or a JSON number is taken at its shortest decimal
spelling (`repr` of the float: 0.49 stays 0.49, never 0.48999999999999999), then held to whole
cents. Reasons print an amount as the services of this kind print a JavaScript number: no
trailing zeros, no exponent (5000, 0.5, 12.5, 4000.01), so "Exceeds max wager $5000" and
"Below min wager $0.5" are the service's own words.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

CENT = Decimal("0.01")
# The largest amount held (a 64-bit count of cents is far beyond any stake; this bound keeps
# the boundary questions' arithmetic and their JSON numbers exact).
MAX_AMOUNT = Decimal("1000000000000")


class AmountError(ValueError):
    """Not an amount of whole cents; the message says why."""


def parse_amount(value: object) -> Decimal:
    """The exact amount of a JSON number, a database REAL or INTEGER, a numeric text, or a
    Decimal; AmountError for a boolean, a non-number, a negative, a non-finite value, more than
    two decimal places, or one above MAX_AMOUNT."""
    if isinstance(value, bool):
        raise AmountError("is a boolean, not an amount")
    if isinstance(value, Decimal):
        amount = value
    elif isinstance(value, int):
        amount = Decimal(value)
    elif isinstance(value, float):
        amount = Decimal(repr(value))
    elif isinstance(value, str):
        try:
            amount = Decimal(value.strip())
        except InvalidOperation:
            raise AmountError(f"{value!r} is not a number") from None
    else:
        raise AmountError(f"is a {type(value).__name__}, not an amount")
    if not amount.is_finite():
        raise AmountError("is not a finite number")
    if amount < 0:
        raise AmountError(f"{format_amount(amount)} is negative")
    if amount > MAX_AMOUNT:
        raise AmountError(f"{format_amount(amount)} is above {format_amount(MAX_AMOUNT)}")
    if amount != amount.quantize(CENT):
        raise AmountError(f"{format_amount(amount)} is not a whole number of cents")
    return amount.quantize(CENT)


def format_amount(amount: Decimal) -> str:
    """The amount as a reason prints it: 5000, 0.5, 12.5, 4000.01 (no trailing zeros, no
    exponent, `-` for a negative)."""
    text = format(amount, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def amount_json(amount: Decimal) -> int | float:
    """The amount as a JSON number for a request or a record: an integer when whole, else the
    float whose shortest spelling is the amount's (0.5, 4000.01), never 0.49000000000000005."""
    if amount == amount.to_integral_value():
        return int(amount)
    return float(format_amount(amount))
