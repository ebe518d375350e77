# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Turn a plain builder into an Ansible filter that reports errors the Ansible way."""

from __future__ import annotations

import functools

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuci.runners.plugins.module_utils.rendering import MissingLibraryError
from ansible_collections.gpuci.runners.plugins.module_utils.validation import ValidationError


def as_filter(filter_name, builder):
    """Wrap ``builder(value, gpu_classes=None, **options)``; errors name the filter, field and value.

    Keyword options (such as ``runtime_class``) go to the builder as they are.
    """

    @functools.wraps(builder)
    def run(value, gpu_classes=None, **options):
        try:
            return builder(value, gpu_classes, **options)
        except (ValidationError, MissingLibraryError) as error:
            raise AnsibleFilterError("gpuci.runners.%s: %s" % (filter_name, error))

    return run


def as_input_filter(filter_name, builder):
    """Wrap ``builder(value)``, a builder that takes its whole input as one value (no gpu_classes)."""

    @functools.wraps(builder)
    def run(value):
        try:
            return builder(value)
        except ValidationError as error:
            raise AnsibleFilterError("gpuci.runners.%s: %s" % (filter_name, error))

    return run
