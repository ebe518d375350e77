# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Turn a plain builder into an Ansible filter that reports errors the Ansible way."""

from __future__ import annotations

import functools

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuci.runners.plugins.module_utils.common.rendering import MissingLibraryError
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError, plain


def as_filter(filter_name, builder):
    """Wrap ``builder(value, gpu_classes=None, **options)``; errors name the filter, field and value.

    Keyword options (such as ``runtime_class``) go to the builder as plain data too.
    """

    @functools.wraps(builder)
    def run(value, gpu_classes=None, **options):
        return build(filter_name, builder, value, gpu_classes, **options)

    return run


def build(filter_name, builder, value, gpu_classes=None, **options):
    """``builder``'s result for plain copies of its inputs; see ``as_filter``."""
    try:
        return builder(plain(value), plain(gpu_classes), **dict((k, plain(v)) for k, v in options.items()))
    except (ValidationError, MissingLibraryError) as error:
        raise AnsibleFilterError("gpuci.runners.%s: %s" % (filter_name, error))


def as_input_filter(filter_name, builder, copy_input=True):
    """Wrap ``builder(value)``, a builder that takes its whole input as one value (no gpu_classes).

    ``copy_input=False`` hands the value over as Ansible gave it, for a
    builder that reads a few fields of a large input: in a task the value is
    made of Ansible's lazy containers, which template every value as it is
    read, so a whole copy costs more than the builder's work.
    """

    @functools.wraps(builder)
    def run(value):
        try:
            return builder(plain(value) if copy_input else value)
        except ValidationError as error:
            raise AnsibleFilterError("gpuci.runners.%s: %s" % (filter_name, error))

    return run
