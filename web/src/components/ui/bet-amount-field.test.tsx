import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { BetAmountField } from './bet-amount-field';

function Field({ initial }: { initial: string }) {
  const [value, setValue] = useState(initial);
  return <BetAmountField value={value} onChange={setValue} />;
}

describe('BetAmountField', () => {
  it('names the half and double buttons by their visible text (WCAG 2.5.3)', () => {
    render(<Field initial="1" />);
    for (const text of ['½', '2×']) {
      const button = screen.getByRole('button', { name: text });
      expect(button).toHaveTextContent(text);
      expect(button).toHaveAccessibleName(text);
    }
    expect(screen.getByRole('button', { name: '½' })).toHaveAccessibleDescription('Half bet');
    expect(screen.getByRole('button', { name: '2×' })).toHaveAccessibleDescription('Double bet');
  });

  it('shows at most two decimals after halving', async () => {
    const user = userEvent.setup();
    render(<Field initial="123.455" />);
    const input = screen.getByLabelText<HTMLInputElement>('Bet Amount');
    await user.click(screen.getByRole('button', { name: '½' }));
    expect(input.value).toBe('61.72');
    await user.click(screen.getByRole('button', { name: '½' }));
    expect(input.value).toBe('30.86');
    await user.click(screen.getByRole('button', { name: '½' }));
    expect(input.value).toBe('15.43');
    await user.click(screen.getByRole('button', { name: '½' }));
    expect(input.value).toBe('7.71');
    await user.click(screen.getByRole('button', { name: '2×' }));
    expect(input.value).toBe('15.42');
  });
});
