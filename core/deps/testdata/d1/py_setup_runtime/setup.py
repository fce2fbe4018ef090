import os
import pkg_resources
import setuptools

setup_requires = []
install_requires = [
    'filelock',
    'numpy>=1.9.0',
    'protobuf>=3.0.0',
    'six>=1.9.0',
]
cupy_require = 'cupy==2.0.0'

cupy_pkg = None
for pkg in ('cupy', 'cupy-cuda80'):
    try:
        cupy_pkg = pkg_resources.get_distribution(pkg)
    except pkg_resources.DistributionNotFound:
        pass

if cupy_pkg is not None:
    install_requires.append(cupy_require)

setuptools.setup(
    name='chainer',
    version='3.0.0',
    setup_requires=setup_requires,
    install_requires=install_requires,
)
